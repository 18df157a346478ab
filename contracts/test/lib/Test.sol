// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

/// @notice The subset of Foundry's cheatcodes our tests use, called at the cheatcode address.
/// (npm's forge-std is an old unofficial copy, so the project keeps this small base instead.)
interface Vm {
    function prank(address sender) external;
    function startPrank(address sender) external;
    function stopPrank() external;
    function deal(address who, uint256 amount) external;
    function warp(uint256 timestamp) external;
    function roll(uint256 blockNumber) external;
    function expectRevert() external;
    function expectRevert(bytes4 selector) external;
    function expectRevert(bytes calldata revertData) external;
    function expectEmit(bool topic1, bool topic2, bool topic3, bool data) external;
    function expectEmit(bool topic1, bool topic2, bool topic3, bool data, address emitter) external;
    function assume(bool condition) external pure;
    function assertTrue(bool condition, string calldata error) external pure;
    function assertFalse(bool condition, string calldata error) external pure;
    function assertEq(uint256 left, uint256 right, string calldata error) external pure;
    function assertEq(int256 left, int256 right, string calldata error) external pure;
    function assertEq(address left, address right, string calldata error) external pure;
    function assertEq(bytes32 left, bytes32 right, string calldata error) external pure;
    function assertEq(bool left, bool right, string calldata error) external pure;
    function assertLe(uint256 left, uint256 right, string calldata error) external pure;
    function assertGe(uint256 left, uint256 right, string calldata error) external pure;
    function assertGt(uint256 left, uint256 right, string calldata error) external pure;
    function addr(uint256 privateKey) external pure returns (address);
    function label(address account, string calldata newLabel) external;
    function getNonce(address account) external view returns (uint64);
    function cool(address target) external;
}

/// @notice `vm` and pure helpers, for tests and for invariant handlers.
abstract contract Common {
    Vm internal constant vm = Vm(address(uint160(uint256(keccak256("hevm cheat code")))));

    /// @notice Clamps `x` into [lo, hi] without discarding fuzz runs.
    function bound(uint256 x, uint256 lo, uint256 hi) internal pure returns (uint256) {
        require(lo <= hi, "bound: lo > hi");
        if (x >= lo && x <= hi) return x;
        uint256 span = hi - lo + 1;
        return lo + (x % span);
    }
}

/// @notice Base contract for forge tests: exposes `vm` and a few helpers.
abstract contract Test is Common {
    /// @dev Marks the contract as a test contract for forge.
    bool public IS_TEST = true;

    /// @notice A labelled address derived from a name, for readable traces.
    function makeAddr(string memory name) internal returns (address a) {
        a = vm.addr(uint256(keccak256(bytes(name))));
        vm.label(a, name);
    }

    /// @notice One contract and the functions of it that an invariant campaign calls.
    struct FuzzSelector {
        address addr;
        bytes4[] selectors;
    }

    address[] private _targetContracts;
    FuzzSelector[] private _targetSelectors;

    /// @notice Restricts invariant campaigns to `target` (forge reads targetContracts()).
    function targetContract(address target) internal {
        _targetContracts.push(target);
    }

    /// @notice Restricts the calls an invariant campaign makes on a target.
    function targetSelector(FuzzSelector memory selector) internal {
        _targetSelectors.push(selector);
    }

    /// @notice Read by forge: the contracts invariant campaigns call.
    function targetContracts() public view returns (address[] memory) {
        return _targetContracts;
    }

    /// @notice Read by forge: the functions invariant campaigns call.
    function targetSelectors() public view returns (FuzzSelector[] memory) {
        return _targetSelectors;
    }
}
